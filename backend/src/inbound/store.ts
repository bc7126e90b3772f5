// Inbound numbers as stored: the document, its public shape, and the lookup the inbound call handling
// (telephony/inboundCalls.ts) uses. Each number is mirrored into LiveKit as one inbound trunk (that number
// only) and one `individual` dispatch rule on it: every call gets a room `in-<random>`, and the caller's
// participant carries the attribute `vp.inbound_number_id` = this document's id.
import type { Db } from 'mongodb';
import type { InboundNumber } from '@voice-platform/schemas';
import { COLLECTIONS } from '../core/collections.js';

/** Rooms of inbound calls start with this (the dispatch rule's room prefix). */
export const INBOUND_ROOM_PREFIX = 'in-';
/** The participant attribute the dispatch rule sets: the inbound number's id. */
export const INBOUND_NUMBER_ID_ATTRIBUTE = 'vp.inbound_number_id';

export interface InboundNumberDoc {
  _id: string;
  number: string;
  bot_id: string;
  variables: Record<string, string>;
  allowed_addresses: string[];
  /** The LiveKit inbound trunk accepting calls to `number`. */
  livekit_trunk_id: string;
  /** The LiveKit dispatch rule on that trunk. */
  livekit_rule_id: string;
  created_at: Date;
  updated_at: Date;
}

export const inboundNumbers = (db: Db) => db.collection<InboundNumberDoc>(COLLECTIONS.inboundNumbers);

/** One inbound number by id, or null. */
export function findInboundNumber(db: Db, id: string): Promise<InboundNumberDoc | null> {
  return inboundNumbers(db).findOne({ _id: id });
}

export function publicInboundNumber(doc: InboundNumberDoc): InboundNumber {
  return {
    id: doc._id,
    number: doc.number,
    bot_id: doc.bot_id,
    variables: doc.variables,
    allowed_addresses: doc.allowed_addresses,
    created_at: doc.created_at.toISOString(),
    updated_at: doc.updated_at.toISOString(),
  };
}
