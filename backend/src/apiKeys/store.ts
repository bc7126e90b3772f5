// API keys as stored. Only the key's hash is kept (keys.ts hashes and checks keys; routes.ts is the admin API).
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
}
