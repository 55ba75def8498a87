/** Web client uploads (`/uploads/<token>`): see upload-route.ts. */
export { ALLOWED_REQUEST_HEADERS, NO_ORIGIN_MESSAGE, checkOrigin, normalizeOrigin } from './cors.js';
export { UPLOAD_TYPES, extensionFor, parseMediaType } from './media-type.js';
export { MultipartError, multipartBoundary, readMultipartFile } from './multipart.js';
export { UPLOAD_LOG_FILE, UploadLog, type UploadRecord } from './upload-log.js';
export {
  DEFAULT_UPLOAD_MAX_BYTES,
  DEFAULT_UPLOAD_SUBFOLDER,
  UPLOADS_ROUTE,
  UploadRoute,
  decodeHeaderFileName,
  mountUploads,
  parseSdkFileName,
  uploadBaseName,
  type UploadRejection,
  type UploadRouteOptions,
  type UploadedEvent,
} from './upload-route.js';
