import type { ConfigurationAtRest } from "#shared/domain/crypto/sealed-configuration.ts";

/**
 * A condition that an item's configuration is still as `read` held it: the same sealed value, or the same plain
 * map of an item written before configurations were sealed, or none. A write that re-seals it (a rewrap, a proxy
 * key rotation) is then refused after a save meanwhile rather than writing back what it read.
 */
export function configurationAsRead(read: ConfigurationAtRest): {
  condition: string;
  values: Record<string, unknown>;
} {
  if (read.sealed_configuration !== undefined)
    return {
      condition: "sealed_configuration = :fromConfig",
      values: { ":fromConfig": read.sealed_configuration },
    };
  if (read.configuration !== undefined)
    return {
      condition: "attribute_not_exists(sealed_configuration) AND configuration = :plainConfig",
      values: { ":plainConfig": read.configuration },
    };
  return {
    condition: "attribute_not_exists(sealed_configuration) AND attribute_not_exists(configuration)",
    values: {},
  };
}
