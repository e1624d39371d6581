export * from './types';
export { CODES, formatPath, NAMESPACE_FILE, type PathSegment, type ValidationCode } from './issues';
export { parseDuration, DURATION_HINT } from './duration';
export { cronProblem, nextDueTimes, type DueTimesOptions } from './cron';
export { parseFlow, type FlowContext, type ParseFlowResult } from './parse-flow';
export { parseNamespaceConfig, type ParseNamespaceConfigResult } from './namespace-config';
export { validateFlowFile } from './validate';
export {
  resolveExecutor,
  validateFlowAgainstNamespace,
  checkExecutorBlock,
  INSTANCE_DEFAULT_EXECUTOR,
  INLINE_EXECUTOR,
} from './executor-merge';
export { ACCEPTED_EXECUTOR_FIELDS, SELECTABLE_EXECUTOR_TYPES } from './schema/executor-block';
export { TASK_ID_PATTERN, FLOW_REF_PATTERN, POOL_PATTERN } from './schema/fields';
export { roots, dependentsOf, isReady, downstreamOf, topologicalOrder } from './dag';
export {
  renderTemplates,
  templateReferences,
  findTemplates,
  TemplateError,
  type TemplateContext,
  type TemplateReference,
  type TemplateOccurrence,
} from './templates';
export {
  nameProblem,
  filePathProblem,
  NAME_PATTERN,
  NAME_MAX_LENGTH,
  FILE_PATH_MAX_BYTES,
  FILE_SEGMENT_MAX_BYTES,
  type InputProblem,
} from './names';
export { MAX_YAML_DEPTH, MAX_YAML_ALIASES } from './yaml';
export {
  assertExecutorTypesAllowed,
  disallowedExecutorIssues,
  ExecutorTypeNotAllowedError,
} from './allowed-executors';
export { assertFlowRunnable, FlowNotRunnableError } from './flow-runnable';
export {
  assertInputs,
  coerceInput,
  inputText,
  InputsInvalidError,
  resolveInputs,
  templateInputs,
  type ResolvedInputs,
} from './inputs';
export { INPUT_NAME_PATTERN, INPUT_TYPES } from './schema/inputs';
