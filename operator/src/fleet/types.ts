import type { VoiceFleetSpec, VoiceFleetStatus } from '@voice-platform/schemas';
import type { CustomObject } from '../core/kube.js';

export type VoiceFleet = CustomObject<VoiceFleetSpec, VoiceFleetStatus>;
export const FLEET_PLURAL = 'voicefleets';
