import { describe, expect, it } from 'vitest';
import { IcebergError, RestCatalog, namespacePath } from '../src/index.js';

const METADATA = {
  'format-version': 2,
  location: 's3://b/t',
  'current-schema-id': 0,
  schemas: [{ 'schema-id': 0, fields: [{ id: 1, name: 'o', required: true, type: 'long' }] }],
  'partition-specs': [{ 'spec-id': 0, fields: [] }],
};

/** A fetch answering from a table of path -> [status, body], recording what was asked. */
function fakeFetch(answers: Record<string, [number, unknown]>): {
  fetch: typeof fetch;
  asked: string[];
} {
  const asked: string[] = [];
  const f = (input: string | URL | Request): Promise<Response> => {
    const url = input instanceof Request ? input.url : input.toString();
    asked.push(url);
    const path = url.replace(/^http:\/\/catalog/, '');
    const [status, body] = answers[path] ?? [
      404,
      { error: { message: `no route ${path}`, type: 'NotFound', code: 404 } },
    ];
    return Promise.resolve(
      new Response(typeof body === 'string' ? body : JSON.stringify(body), { status }),
    );
  };
  return { fetch: f, asked };
}

describe('RestCatalog', () => {
  it('joins namespace parts with the unit separator', () => {
    expect(namespacePath(['a', 'b c'])).toBe('a%1Fb%20c');
    expect(() => namespacePath([])).toThrow('TWG_ICEBERG_INVALID: namespace');
  });

  it('asks /v1/config once, merges defaults < ours < overrides, and puts the prefix in table paths', async () => {
    const { fetch, asked } = fakeFetch({
      '/v1/config?warehouse=wh': [
        200,
        { defaults: { prefix: 'no', a: '1' }, overrides: { prefix: 'p1' } },
      ],
      '/v1/p1/namespaces/a%1Fb/tables/t': [
        200,
        { 'metadata-location': 's3://b/t/m.json', metadata: METADATA },
      ],
    });
    const catalog = new RestCatalog({
      uri: 'http://catalog/',
      warehouse: 'wh',
      fetch,
      properties: { a: '2', prefix: 'mine' },
    });
    expect(await catalog.properties()).toEqual({ prefix: 'p1', a: '2' });
    const loaded = await catalog.loadTable(['a', 'b'], 't');
    await catalog.loadTable(['a', 'b'], 't');
    expect(loaded.name).toBe('a.b.t');
    expect(loaded.metadataLocation).toBe('s3://b/t/m.json');
    expect(loaded.metadata.schemas[0]?.fields[0]?.name).toBe('o');
    expect(asked.filter((u) => u.includes('/v1/config'))).toHaveLength(1);
  });

  it('a missing table is an error naming it, with the status and the catalog message', async () => {
    const { fetch } = fakeFetch({ '/v1/config': [200, { defaults: {}, overrides: {} }] });
    const catalog = new RestCatalog({ uri: 'http://catalog', fetch });
    const error = await catalog.loadTable('ns', 'gone').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IcebergError);
    expect(error).toMatchObject({
      code: 'TWG_ICEBERG_TABLE_NOT_FOUND',
      subject: 'ns.gone',
      status: 404,
      canRetry: false,
    });
    expect((error as Error).message).toContain(
      'ns.gone: GET http://catalog/v1/namespaces/ns/tables/gone answered 404: NotFound: no route',
    );
  });

  it('5xx is transient, other 4xx a refusal; a body that is not JSON is quoted', async () => {
    const { fetch } = fakeFetch({
      '/v1/config': [200, {}],
      '/v1/namespaces/ns/tables/busy': [503, 'upstream down'],
      '/v1/namespaces/ns/tables/secret': [
        403,
        { error: { message: 'not for you', type: 'ForbiddenException', code: 403 } },
      ],
    });
    const catalog = new RestCatalog({ uri: 'http://catalog', fetch });
    await expect(catalog.loadTable('ns', 'busy')).rejects.toMatchObject({
      code: 'TWG_ICEBERG_CATALOG_UNAVAILABLE',
      canRetry: true,
      message: expect.stringContaining('answered 503: upstream down') as unknown,
    });
    await expect(catalog.loadTable('ns', 'secret')).rejects.toMatchObject({
      code: 'TWG_ICEBERG_CATALOG_REFUSED',
      message: expect.stringContaining('ForbiddenException: not for you') as unknown,
    });
  });

  it('a catalog that does not answer is transient, and the config is asked again next time', async () => {
    let calls = 0;
    const fetch = ((): Promise<Response> => {
      calls++;
      return Promise.reject(new TypeError('fetch failed'));
    }) as typeof globalThis.fetch;
    const catalog = new RestCatalog({ uri: 'http://catalog', fetch });
    await expect(catalog.loadTable('ns', 't')).rejects.toMatchObject({
      code: 'TWG_ICEBERG_CATALOG_UNAVAILABLE',
      subject: 'catalog config',
    });
    await expect(catalog.properties()).rejects.toThrow('fetch failed');
    expect(calls).toBe(2);
  });
});
