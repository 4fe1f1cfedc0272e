/**
 * Messages of tenant code (a thrown error's), made fit for whoever may read them: reactor callers
 * (shared/domain/reactors/run-error.ts) and members debugging a proxy transform (shared/domain/proxies/invoke.ts).
 */

/** Longest message of the code's that an answer quotes. */
export const MAX_MESSAGE_CHARS = 1000;

/**
 * The code's message as the caller may read it: no absolute file path of any host (the code's own errors may
 * quote the sandbox's, `file:` URLs or `/var/task/...`), at most MAX_MESSAGE_CHARS. The caller already holds
 * `token:use` on the data the run saw, so the message itself is theirs to read.
 */
export function readableMessage(message: string): string {
  const withoutPaths = message
    .replace(/file:\/\/\S+/g, "<path>")
    .replace(/(^|[\s(["'`=,:])(\/(?:[\w.@+-]+\/)+[\w.@+-]*)/g, (match, before: string, path: string) =>
      /^\/(var|opt|tmp|home|root|usr|work|srv|app|Users|private|proc|etc|dev|mnt)\//.test(path)
        ? `${before}<path>`
        : match,
    );
  return withoutPaths.length > MAX_MESSAGE_CHARS
    ? `${withoutPaths.slice(0, MAX_MESSAGE_CHARS - 1)}…`
    : withoutPaths;
}
