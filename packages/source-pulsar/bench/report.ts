export { benchLine as line, round } from '@thalweg/test-services';

/** Where the benches reach the broker. */
export interface Endpoint {
  readonly wsUrl: string;
  readonly adminUrl: string;
}
