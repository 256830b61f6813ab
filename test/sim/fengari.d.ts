/** fengari ships no types; redis-model.ts describes the part of its API it uses. */
declare module 'fengari';
