import type { BotResourceSpec, BotResourceStatus } from '@voice-platform/schemas';
import type { CustomObject } from '../core/kube.js';

export type BotResource = CustomObject<BotResourceSpec, BotResourceStatus>;
export const BOT_PLURAL = 'bots';
