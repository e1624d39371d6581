import { describeExecutorProtocolContract } from '@sluice/testing';
import { executorProtocolBinding } from './executor-protocol-bindings';

// Executors cannot tell the two bindings apart, so both answer the same suite.
describeExecutorProtocolContract('direct (in-process)', () => executorProtocolBinding('direct'));
describeExecutorProtocolContract('HTTP client over the executor API', () => executorProtocolBinding('http'));
