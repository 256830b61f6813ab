/** The lease's four Lua scripts by name; each lives in `scripts/` with its argument order and reply decoder. */
export { CLAIM_SCRIPT } from './scripts/claim.script.js';
export { NOTE_SCRIPT } from './scripts/note.script.js';
export { RELEASE_SCRIPT } from './scripts/release.script.js';
export { RENEW_SCRIPT } from './scripts/renew.script.js';
