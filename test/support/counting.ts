/**
 * What the service did in this process while `run` ran (integration tests run it in the test's process): the
 * characters JSON.parse was given, or JSON.stringify produced. Work is counted, never timed.
 */
export async function charactersParsed<T>(run: () => Promise<T>): Promise<{ result: T; chars: number }> {
  const parse = JSON.parse;
  let chars = 0;
  JSON.parse = ((text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
    chars += String(text).length;
    return parse(text, reviver);
  }) as typeof JSON.parse;
  try {
    return { result: await run(), chars };
  } finally {
    JSON.parse = parse;
  }
}

export async function charactersStringified<T>(run: () => Promise<T>): Promise<{ result: T; chars: number }> {
  const stringify = JSON.stringify;
  let chars = 0;
  JSON.stringify = ((...args: Parameters<typeof JSON.stringify>) => {
    const out = stringify(...args);
    if (typeof out === "string") chars += out.length;
    return out;
  }) as typeof JSON.stringify;
  try {
    return { result: await run(), chars };
  } finally {
    JSON.stringify = stringify;
  }
}
