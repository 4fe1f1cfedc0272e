/** The single source of "now". Every expiry in the service reads it, so tests can move time. */
export interface Clock {
  now(): Date;
}
