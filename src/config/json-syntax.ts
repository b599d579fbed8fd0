/**
 * Where a JSON text goes wrong, and why, in one line. JSON.parse's messages
 * differ between Node versions, and some carry no position at all ("Unexpected
 * token 'x', "…the whole file…" is not valid JSON", over several lines), so
 * the config loader finds the first error itself with this small scanner of
 * the JSON grammar (RFC 8259). Only called once JSON.parse has failed.
 */

export interface JsonSyntaxError {
  /** Character offset of the first character that cannot be right. */
  offset: number;
  message: string;
}

class Stop extends Error {
  constructor(
    readonly offset: number,
    readonly why: string,
  ) {
    super(why);
  }
}

/** The first syntax error in `text`, or null when it is valid JSON. */
export function findJsonSyntaxError(text: string): JsonSyntaxError | null {
  let i = 0;
  const fail = (why: string, at = i): never => {
    throw new Stop(at, why);
  };
  const space = () => {
    while (i < text.length) {
      const c = text[i];
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') i++;
      else if (c === '/' && (text[i + 1] === '/' || text[i + 1] === '*')) fail('comments are not allowed in JSON');
      else break;
    }
  };
  const shown = () => (i >= text.length ? 'the end of the file' : text[i] === '"' ? `'"'` : JSON.stringify(text[i]));
  const string = () => {
    if (text[i] !== '"') fail(text[i] === "'" ? 'strings take double quotes, not single' : `expected a double-quoted string, got ${shown()}`);
    const start = i++;
    for (;;) {
      if (i >= text.length) fail('unterminated string', start);
      const c = text[i];
      if (c === '"') return void i++;
      if (c < ' ') fail(c === '\n' ? 'unterminated string (a line break inside a string must be written \\n)' : 'control character inside a string');
      if (c === '\\') {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail('bad \\u escape: expected four hex digits');
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else fail(`bad escape \\${e ?? ''}`);
      } else i++;
    }
  };
  const number = () => {
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m) fail(`expected a value, got ${shown()}`);
    i += m![0].length;
    if (/^[0-9]/.test(text[i] ?? '')) fail('numbers cannot have leading zeros');
  };
  const value = (): void => {
    space();
    const c = text[i];
    if (c === '{') return object();
    if (c === '[') return array();
    if (c === '"' || c === "'") return string();
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, i)) return void (i += word.length);
    }
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return number();
    const bare = /^[A-Za-z_$][\w$]*/.exec(text.slice(i));
    fail(
      bare ? `unexpected word ${JSON.stringify(bare[0])} (strings take double quotes; true, false and null are lowercase)` : `expected a value, got ${shown()}`,
    );
  };
  const object = () => {
    i++;
    space();
    if (text[i] === '}') return void i++;
    for (;;) {
      space();
      if (text[i] === '}') fail('trailing comma before }', i);
      if (text[i] !== '"') fail(text[i] === "'" ? 'property names take double quotes, not single' : `expected a double-quoted property name, got ${shown()}`);
      string();
      space();
      if (text[i] !== ':') fail(`expected ':' after the property name, got ${shown()}`);
      i++;
      value();
      space();
      if (text[i] === ',') i++;
      else if (text[i] === '}') return void i++;
      else fail(`expected ',' or '}' after a property value, got ${shown()}`);
    }
  };
  const array = () => {
    i++;
    space();
    if (text[i] === ']') return void i++;
    for (;;) {
      space();
      if (text[i] === ']') fail('trailing comma before ]', i);
      value();
      space();
      if (text[i] === ',') i++;
      else if (text[i] === ']') return void i++;
      else fail(`expected ',' or ']' after a list item, got ${shown()}`);
    }
  };
  try {
    space();
    if (i >= text.length) fail('the file is empty');
    value();
    space();
    if (i < text.length) fail(`unexpected ${shown()} after the end of the JSON value`);
    return null;
  } catch (err) {
    if (err instanceof Stop) return { offset: err.offset, message: err.why };
    throw err;
  }
}
