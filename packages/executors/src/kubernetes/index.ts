export * from './job-manifest';
export * from './kube-client';
export * from './pod-failure';
export * from './pod-watch';
export * from './kubernetes-executor';
