/** Epoch milliseconds (instants) or milliseconds (durations). */
export type Millis = number;

/** Reads the wall clock once; injected everywhere a component needs "now". */
export type Clock = () => Millis;
