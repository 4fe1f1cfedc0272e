/** Knows the deployment's root key (as a hash) and says whether a presented key's hash is it. */
export interface RootKeyVerifier {
  isRootKey(keyHash: string): Promise<boolean>;
}
