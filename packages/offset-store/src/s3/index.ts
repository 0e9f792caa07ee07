// @thalweg/offset-store/s3: coverage and leases in an S3 bucket. Needs the
// optional peer @aws-sdk/client-s3.
export * from './s3-coverage.js';
export * from '../lease/lease-objects.js';
export * from '../lease/s3-lease-store.js';
