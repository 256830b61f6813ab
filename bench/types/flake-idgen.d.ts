/** flake-idgen ships no types: the part of its API the ID benchmark calls. */
declare module 'flake-idgen' {
  export default class FlakeId {
    constructor(options?: { datacenter?: number; worker?: number; id?: number; epoch?: number });
    /** The next ID as an 8-byte big-endian Buffer; throws once a millisecond's sequence is used up. */
    next(): Buffer;
  }
}
