export {
  jsonRow,
  type JsonFieldSource,
  type JsonFields,
  type RecordMeta,
  type RecordMetaField,
} from './json-fields.js';
export {
  jsonDerivation,
  type JsonDerivation,
  type JsonDerivationOptions,
} from './json-derivation.js';
