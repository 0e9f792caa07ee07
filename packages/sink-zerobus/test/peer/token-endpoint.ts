import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TokenRequest {
  readonly clientId: string;
  /** The `resource` form field: names the workspace id the SDK derived from the endpoint. */
  readonly resource: string | null;
  readonly granted: boolean;
}

/**
 * The workspace's OAuth endpoint as the SDK uses it: `POST /oidc/v1/token`,
 * client credentials in HTTP Basic auth, a form body with
 * `grant_type=client_credentials`. Answers `{"access_token", "expires_in"}`
 * to the configured client and 401 to anyone else.
 */
export class TokenEndpoint {
  readonly requests: TokenRequest[] = [];
  private readonly issued = new Set<string>();
  private readonly server: Server;

  constructor(
    private readonly clientId: string,
    private readonly clientSecret: string,
  ) {
    this.server = createServer((req, res) => this.handle(req, res));
  }

  async start(): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    return (this.server.address() as AddressInfo).port;
  }

  /** Whether `authorization` carries a token this endpoint issued. */
  accepts(authorization: string | undefined): boolean {
    return authorization?.startsWith('Bearer ') === true && this.issued.has(authorization.slice(7));
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const [id, secret] = basicCredentials(req.headers.authorization);
      const granted =
        req.method === 'POST' &&
        req.url === '/oidc/v1/token' &&
        form.get('grant_type') === 'client_credentials' &&
        id === this.clientId &&
        secret === this.clientSecret;
      this.requests.push({ clientId: id, resource: form.get('resource'), granted });
      res.setHeader('content-type', 'application/json');
      if (!granted) {
        res.statusCode = 401;
        res.end(JSON.stringify({ error: 'invalid_client' }));
        return;
      }
      const token = `peer-token-${this.issued.size + 1}`;
      this.issued.add(token);
      res.end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: 3600 }));
    });
  }
}

function basicCredentials(header: string | undefined): [string, string] {
  if (header?.startsWith('Basic ') !== true) return ['', ''];
  const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? [decoded, ''] : [decoded.slice(0, colon), decoded.slice(colon + 1)];
}
