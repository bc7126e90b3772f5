// One kube-apiserver + etcd, FerretDB and Redis for the whole operator suite (the Bot test runs the
// real backend against them).
import { jestGlobalSetup } from '@voice-platform/tests/infra';

export default jestGlobalSetup(['kube', 'mongodb', 'redis']);
