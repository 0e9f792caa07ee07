export { backoffDelay, sleep, type BackoffPolicy } from '@thalweg/connector-core';
