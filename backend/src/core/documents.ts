// The documents the replica's cache (cache.ts) holds, as stored: bots, API keys and outbound trunks. Here,
// below their folders, so the cache and the services it hangs on name them without importing a domain.
import type { ApiKeyScope, Bot, BotMcpServerPublic, BotToolPublic, SipTransport } from '@voice-platform/schemas';

/** A tool as kept: its header values sealed (write-only), their names in the clear. */
export type DocTool = BotToolPublic & { headers_sealed?: string };

/** An MCP server as kept: its header values sealed like a tool's. */
export type DocMcpServer = BotMcpServerPublic & { headers_sealed?: string };

export type BotDoc = Omit<Bot, 'id' | 'created_at' | 'updated_at' | 'tools' | 'mcp_servers' | 'has_tool_secret'> & {
  _id: string;
  tools: DocTool[];
  mcp_servers: DocMcpServer[];
  /** AES-GCM box (secretBox.ts) of the secret that signs HTTP tool requests; absent without one. */
  tool_secret_sealed?: string | null;
  created_at: Date;
  updated_at: Date;
};

export interface TrunkDoc {
  _id: string;
  name: string;
  address: string;
  transport: SipTransport;
  numbers: string[];
  auth_username: string | null;
  /** AES-GCM box of the password (see secretBox.ts); null without one. */
  auth_password_sealed: string | null;
  default: boolean;
  /** The mirror of this trunk in LiveKit (the id workers dial through). */
  livekit_trunk_id: string;
  created_at: Date;
  updated_at: Date;
}

export interface ApiKeyDoc {
  _id: string;
  name: string;
  key_hash: string;
  prefix: string;
  is_active: boolean;
  expires_at: Date | null;
  created_at: Date;
  created_by: string | null;
  last_used_at: Date | null;
  deactivated_at: Date | null;
  deactivated_by: string | null;
  /** Absent on keys stored before scopes existed: read as LEGACY_API_KEY_SCOPES (and migrated to them at boot). */
  scopes?: ApiKeyScope[];
}
