/** fengari ships no types; redis-model.ts describes the part of its API it uses. */
declare module 'fengari';
declare module 'fengari/src/ldo.js';
declare module 'fengari/src/lobject.js';
declare module 'fengari/src/lstate.js';
declare module 'fengari/src/lstring.js';
