export * from './job-manifest';
export * from './job-look';
export * from './kube-client';
export * from './pod-failure';
export * from './pod-watch';
export * from './kubernetes-executor';
