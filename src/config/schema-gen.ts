/**
 * Writes crawler.config.schema.json from the zod schema (`npm run schema`),
 * and record.schema.json, the records' schema (output/record-schema.ts).
 * The file is committed so editors can use it without a build; a test fails
 * when it no longer matches the schema, so it cannot drift.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderConfigJsonSchema } from './file-schema.js';
import { renderRecordJsonSchema } from '../output/record-schema.js';

// dist/config/ sits two levels below the package root, like src/config/.
const target = fileURLToPath(new URL('../../crawler.config.schema.json', import.meta.url));
writeFileSync(target, renderConfigJsonSchema());
process.stderr.write(`wrote ${target}\n`);
const records = fileURLToPath(new URL('../../record.schema.json', import.meta.url));
writeFileSync(records, renderRecordJsonSchema());
process.stderr.write(`wrote ${records}\n`);
