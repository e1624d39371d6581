export * from './postgres';
export * from './databases';
export * from './processes';
export * from './docker';
export * from './docker-images';
export * from './rootfs';
export * from './kube';
