/** Builds a filter expression with `#n`/`:v` placeholders only; no request text ever enters the expression. */
export class FilterBuilder {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};
  private readonly parts: string[] = [];
  private counter = 0;

  name(attribute: string): string {
    const existing = Object.entries(this.names).find(([, v]) => v === attribute)?.[0];
    if (existing) return existing;
    const placeholder = `#n${this.counter++}`;
    this.names[placeholder] = attribute;
    return placeholder;
  }

  value(value: unknown): string {
    const placeholder = `:v${this.counter++}`;
    this.values[placeholder] = value;
    return placeholder;
  }

  add(part: string): void {
    this.parts.push(part);
  }

  text(): string {
    return this.parts.join(" AND ");
  }
}
