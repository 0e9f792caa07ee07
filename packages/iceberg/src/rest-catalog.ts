import { IcebergError, invalidArgument } from './errors.js';
import { parseTableMetadata, quoteSnapshotIds, type TableMetadata } from './table-metadata.js';

/** How to reach an Iceberg REST catalog. */
export interface RestCatalogOptions {
  /** The catalog's base URL, without `/v1`: e.g. `http://127.0.0.1:28181`. */
  readonly uri: string;
  /** Sent as `?warehouse=` to `GET /v1/config`, for catalogs that serve several. */
  readonly warehouse?: string;
  /** Extra headers on every request (an `Authorization` bearer token, say). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Properties of ours, between the catalog's defaults and its overrides (as the spec merges them). */
  readonly properties?: Readonly<Record<string, string>>;
  /** The fetch to use (tests inject one); the global fetch by default. */
  readonly fetch?: typeof fetch;
}

/** A table as the catalog serves it. */
export interface LoadedTable {
  /** `ns.table` (nested namespace parts joined with dots), as errors name it. */
  readonly name: string;
  readonly metadataLocation: string | undefined;
  readonly metadata: TableMetadata;
  /** Table-level config the catalog returned (e.g. vended S3 settings). */
  readonly config: Readonly<Record<string, string>>;
}

interface ErrorBody {
  error?: { message?: string; type?: string; code?: number };
}

/** A namespace as one path segment: parts joined by the unit separator (0x1F), as the REST spec says. */
export function namespacePath(namespace: string | readonly string[]): string {
  const parts = typeof namespace === 'string' ? [namespace] : namespace;
  if (parts.length === 0 || parts.some((p) => p === '')) {
    throw invalidArgument('namespace', 'needs at least one non-empty part');
  }
  return encodeURIComponent(parts.join('\x1f'));
}

/**
 * A client of the Iceberg REST catalog's read endpoints: `GET /v1/config`
 * (once, on first use: its `prefix` goes into every later path) and
 * `GET /v1/{prefix}/namespaces/{ns}/tables/{table}`. It reads; it never
 * commits. A 404 is TWG_ICEBERG_TABLE_NOT_FOUND naming the table; other
 * 4xx answers are refused with the catalog's own message; 5xx and network
 * failures are transient.
 */
export class RestCatalog {
  private readonly base: string;
  private readonly doFetch: typeof fetch;
  private config: Promise<Readonly<Record<string, string>>> | undefined;

  constructor(private readonly options: RestCatalogOptions) {
    let url: URL;
    try {
      url = new URL(options.uri);
    } catch (e) {
      throw invalidArgument('uri', `not a URL: ${JSON.stringify(options.uri)} (${String(e)})`);
    }
    this.base = url.href.replace(/\/+$/, '');
    this.doFetch = options.fetch ?? fetch;
  }

  /** The merged catalog properties: the catalog's defaults, ours, then its overrides. */
  properties(): Promise<Readonly<Record<string, string>>> {
    this.config ??= this.loadConfig().catch((e: unknown) => {
      this.config = undefined; // a failed first call is retried by the next
      throw e;
    });
    return this.config;
  }

  private async loadConfig(): Promise<Readonly<Record<string, string>>> {
    const query =
      this.options.warehouse === undefined
        ? ''
        : `?warehouse=${encodeURIComponent(this.options.warehouse)}`;
    const body = (await this.get(`/v1/config${query}`, 'catalog config')) as {
      defaults?: Record<string, string>;
      overrides?: Record<string, string>;
    };
    return { ...body.defaults, ...this.options.properties, ...body.overrides };
  }

  /** Loads a table's current metadata. */
  async loadTable(namespace: string | readonly string[], table: string): Promise<LoadedTable> {
    if (table === '') throw invalidArgument('table', 'is empty');
    const name = [...(typeof namespace === 'string' ? [namespace] : namespace), table].join('.');
    const props = await this.properties();
    const prefix =
      props['prefix'] === undefined || props['prefix'] === '' ? '' : `/${props['prefix']}`;
    const path = `/v1${prefix}/namespaces/${namespacePath(namespace)}/tables/${encodeURIComponent(table)}`;
    const body = (await this.get(path, name)) as {
      'metadata-location'?: string;
      metadata?: unknown;
      config?: Record<string, string>;
    };
    return {
      name,
      metadataLocation: body['metadata-location'],
      metadata: parseTableMetadata(body.metadata, name),
      config: body.config ?? {},
    };
  }

  /** GETs a path and parses its JSON (snapshot ids kept exact); `subject` names what in errors. */
  private async get(path: string, subject: string): Promise<unknown> {
    const url = `${this.base}${path}`;
    let response: Response;
    let text: string;
    try {
      response = await this.doFetch(url, {
        headers: { accept: 'application/json', ...this.options.headers },
      });
      text = await response.text();
    } catch (e) {
      throw new IcebergError(
        'TWG_ICEBERG_CATALOG_UNAVAILABLE',
        subject,
        `GET ${url} failed: ${String(e)}`,
        { cause: e },
      );
    }
    if (!response.ok) throw this.refusal(response.status, text, subject, url);
    try {
      return JSON.parse(quoteSnapshotIds(text));
    } catch (e) {
      throw new IcebergError('TWG_ICEBERG_METADATA_INVALID', subject, `GET ${url}: not JSON`, {
        cause: e,
        status: response.status,
      });
    }
  }

  private refusal(status: number, text: string, subject: string, url: string): IcebergError {
    let said = text.slice(0, 500);
    try {
      const e = (JSON.parse(text) as ErrorBody).error;
      if (e?.message !== undefined)
        said = `${e.type === undefined ? '' : `${e.type}: `}${e.message}`;
    } catch {
      // not JSON: the body's start is the best message there is
    }
    const message = `GET ${url} answered ${status}: ${said}`;
    if (status === 404) {
      return new IcebergError('TWG_ICEBERG_TABLE_NOT_FOUND', subject, message, { status });
    }
    const code = status >= 500 ? 'TWG_ICEBERG_CATALOG_UNAVAILABLE' : 'TWG_ICEBERG_CATALOG_REFUSED';
    return new IcebergError(code, subject, message, { status });
  }
}
