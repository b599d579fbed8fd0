/**
 * Properties of --save-dir's URL → path mapping (src/archive/url-path.ts):
 * whatever the URL, no saved name is one a version-control tool (or any
 * tool reading dot-files) would act on, on a case-sensitive or a
 * case-insensitive file system, with or without the trailing dots and
 * spaces Windows drops, and with or without the characters HFS+ ignores.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PathAllocator, urlPathSegments } from '../../src/archive/url-path.js';
import { FUZZ_TIMEOUT, fuzzParams } from './fuzz.js';

const VCS = ['.git', '.hg', '.svn', '.bzr', '_darcs', 'cvs', '.jj', '.pijul', '.sl', '_fossil_', '.fslckout', 'head'];
// Code points HFS+ leaves out when it compares names (git's is_hfs_dotgit list).
const HFS_IGNORED = /[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/gu;

/** A name as the most forgiving file system would see it. */
const asFileSystemSees = (name: string) =>
  name
    .normalize('NFC')
    .replace(HFS_IGNORED, '')
    .replace(/[. ]+$/, '')
    .toUpperCase()
    .toLowerCase();

const spellings = (word: string) =>
  fc
    .tuple(
      fc.array(fc.boolean(), { minLength: word.length, maxLength: word.length }),
      fc.array(fc.boolean(), { minLength: word.length, maxLength: word.length }),
      fc.constantFrom('', '.', '..', ' ', '. ', ' .', '%2E', '%20', '%2e%20'),
      fc.constantFrom('', '\u200c', '\ufeff', '%E2%80%8C'),
    )
    .map(([upper, encode, tail, hidden]) => {
      let out = '';
      [...word].forEach((c, i) => {
        const cased = upper[i] ? c.toUpperCase() : c;
        out += encode[i] ? `%${cased.charCodeAt(0).toString(16).padStart(2, '0')}` : cased;
        if (i === 1) out += hidden;
      });
      return out + tail;
    });

const segment = fc.oneof(fc.constantFrom(...VCS).chain(spellings), fc.stringMatching(/^[a-z.]{1,5}$/));

describe('saved paths never name a repository', () => {
  it(
    'no segment of any saved path is a VCS name or a dot-name, in any case, with any trailing dots or spaces',
    () => {
      fc.assert(
        fc.property(fc.array(segment, { minLength: 1, maxLength: 5 }), fc.boolean(), (segments, asDir) => {
          const url = `http://h.test/${segments.join('/')}${asDir ? '/' : ''}`;
          const paths = [urlPathSegments(url), new PathAllocator().allocate(url).split('/')];
          for (const names of paths) {
            for (const name of names) {
              expect(VCS).not.toContain(asFileSystemSees(name));
              expect(asFileSystemSees(name).startsWith('.')).toBe(false);
            }
          }
        }),
        fuzzParams(300),
      );
    },
    FUZZ_TIMEOUT,
  );
});
