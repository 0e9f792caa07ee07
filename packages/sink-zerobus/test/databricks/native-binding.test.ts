import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  loadZerobusBinding,
  loadZerobusBindingWith,
  SdkTransportFactory,
  ZEROBUS_BINDING_PACKAGE,
} from '../../src/databricks/index.js';

const missing = () => {
  throw Object.assign(new Error(`Cannot find module '${ZEROBUS_BINDING_PACKAGE}'`), {
    code: 'MODULE_NOT_FOUND',
  });
};

describe('loading the native binding', () => {
  it('says which package to install when the binding is absent', () => {
    expect(() => loadZerobusBindingWith(missing)).toThrow(
      /not installed: add @databricks\/zerobus-ingest-sdk-linux-x64-gnu@1\.3\.0/,
    );
    expect(() => loadZerobusBindingWith(missing)).toThrow(
      expect.objectContaining({ failure: 'fatal-config' }),
    );
  });

  it('reports a binding that is present but cannot load, or has another surface', () => {
    const broken = () => {
      throw new Error('invalid ELF header');
    };
    expect(() => loadZerobusBindingWith(broken)).toThrow(
      /could not be loaded .*invalid ELF header/,
    );
    expect(() => loadZerobusBindingWith(() => ({ ZerobusSdk: function ZerobusSdk() {} }))).toThrow(
      /no createArrowStream.*ArrowDataType is not an enum/,
    );
  });

  it('fails the factory at construction, not at the first batch', () => {
    const options = {
      zerobusEndpoint: 'https://1234.zerobus.example.com',
      unityCatalogUrl: 'https://workspace.example.com',
      clientId: 'id',
      clientSecret: 'secret',
    };
    expect(
      () =>
        new SdkTransportFactory(options, {
          log: () => undefined,
          binding: loadZerobusBindingWith(() => ({})),
        }),
    ).toThrow(/does not have the surface/);
  });

  it('loads the installed binding once', () => {
    const binding = loadZerobusBinding();
    expect(typeof binding.ZerobusSdk).toBe('function');
    expect(binding.ArrowDataType['Int32']).toBe(3);
    expect(loadZerobusBinding()).toBe(binding);
  });

  it('is reachable only through the ./databricks entry point', () => {
    const root = join(import.meta.dirname, '..', '..');
    const exports = (
      JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
        exports: Record<string, Record<string, string>>;
      }
    ).exports;
    expect(exports['./databricks']?.['@thalweg/source']).toBe('./src/databricks/index.ts');
    // No module outside src/databricks imports the adapter or the binding.
    const files = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' }).filter(
      (f) => f.endsWith('.ts') && !f.startsWith('databricks'),
    );
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      const text = readFileSync(join(root, 'src', file), 'utf8');
      expect(text, file).not.toMatch(/from '\.{1,2}\/(\.\.\/)*databricks\/|zerobus-ingest-sdk/);
    }
  });
});
