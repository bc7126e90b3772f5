// The telephony plane as the routes and the dialler see it (docs/design.md §7): trunks, inbound numbers,
// dispatch rules and call rooms. livekit.ts implements it; nothing else sees the SDK.
import type { SipTransport } from '@voice-platform/schemas';

export interface TrunkSpec {
  name: string;
  address: string;
  transport: SipTransport;
  numbers: string[];
  authUsername: string | null;
  authPassword: string | null;
}

/** An inbound trunk: the one number it accepts calls to, from these addresses (empty: any). */
export interface InboundTrunkSpec {
  name: string;
  number: string;
  allowedAddresses: string[];
}

/** An `individual` dispatch rule: each call to the trunk gets a room of its own, `<roomPrefix><random>`;
 *  the caller's participant carries `attributes`. */
export interface DispatchRuleSpec {
  name: string;
  trunkId: string;
  roomPrefix: string;
  attributes: Record<string, string>;
}

/** LiveKit could not be reached or refused the request; `notFound` when the object is already gone. */
export class TelephonyError extends Error {
  constructor(
    message: string,
    readonly notFound = false,
  ) {
    super(message);
    this.name = 'TelephonyError';
  }
}

export interface Telephony {
  /** Creates the trunk in LiveKit; resolves to its LiveKit id. */
  createOutboundTrunk(spec: TrunkSpec): Promise<string>;
  /** Replaces the LiveKit trunk's fields with `spec` (all of them, the password included). */
  updateOutboundTrunk(livekitId: string, spec: TrunkSpec): Promise<void>;
  /** Every outbound trunk in LiveKit (its id and name), the platform's and anyone's. */
  listOutboundTrunks(): Promise<Array<{ id: string; name: string }>>;
  /** Deletes the LiveKit trunk (outbound or inbound); one already gone is not an error. */
  deleteTrunk(livekitId: string): Promise<void>;
  /** Creates an inbound trunk; resolves to its LiveKit id. */
  createInboundTrunk(spec: InboundTrunkSpec): Promise<string>;
  /** Replaces the inbound trunk's fields with `spec`. */
  updateInboundTrunk(livekitId: string, spec: InboundTrunkSpec): Promise<void>;
  /** Creates an `individual` dispatch rule; resolves to its LiveKit id. */
  createDispatchRule(spec: DispatchRuleSpec): Promise<string>;
  /** Replaces the dispatch rule with `spec`. */
  updateDispatchRule(livekitId: string, spec: DispatchRuleSpec): Promise<void>;
  /** Deletes the dispatch rule; one already gone is not an error. */
  deleteDispatchRule(livekitId: string): Promise<void>;
  /** Deletes a call's room (every participant is removed: a SIP callee gets a BYE); one already gone is not an error. */
  deleteRoom(name: string): Promise<void>;
}
