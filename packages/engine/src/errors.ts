/** Errors the API layer maps to HTTP statuses; messages are safe to show to the caller. */
export class NotFoundError extends Error {
  readonly status = 404;
  constructor(what: string) {
    super(`${what} not found`);
    this.name = 'NotFoundError';
  }
}

export class ConflictError extends Error {
  readonly status = 409;
  constructor(message: string) {
    super(message);
    this.name = 'ConflictError';
  }
}

/** A run token that is valid as a JWT but no longer grants access (task run ended or re-claimed). */
export class RunTokenRevokedError extends Error {
  readonly status = 401;
  constructor() {
    super('run token revoked: the task run has ended or is held by a newer claim');
    this.name = 'RunTokenRevokedError';
  }
}

export class PayloadTooLargeError extends Error {
  readonly status = 413;
  constructor(message: string) {
    super(message);
    this.name = 'PayloadTooLargeError';
  }
}
