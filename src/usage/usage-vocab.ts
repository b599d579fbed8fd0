/**
 * The uses a crawl's output may be for, in one vocabulary: what `--purpose`
 * declares and what records' `usage` speaks of. Other vocabularies' names
 * map onto it: the IETF aipref draft's `ai-use` is `ai-input`, Cloudflare
 * Content-Signal's `ai-train` is `train-ai`. Loaded by the config at every
 * start: no dependency.
 */

export const PURPOSES = ['search', 'train-ai', 'ai-input', 'tdm'] as const;
export type Purpose = (typeof PURPOSES)[number];

/** Other vocabularies' names for the same uses. */
export const PURPOSE_ALIASES: Readonly<Record<string, Purpose>> = {
  'ai-train': 'train-ai',
  'ai-use': 'ai-input',
};

/** The use a name stands for (its own, or an alias), or undefined. */
export function purposeOf(name: string): Purpose | undefined {
  const lower = name.trim().toLowerCase();
  return (PURPOSES as readonly string[]).includes(lower) ? (lower as Purpose) : PURPOSE_ALIASES[lower];
}

/** The known names, for a message: `search, train-ai (or ai-train), ai-input (or ai-use), tdm`. */
export function knownPurposes(): string {
  return PURPOSES.map((p) => {
    const aliases = Object.entries(PURPOSE_ALIASES)
      .filter(([, to]) => to === p)
      .map(([from]) => from);
    return aliases.length === 0 ? p : `${p} (or ${aliases.join(', ')})`;
  }).join(', ');
}
