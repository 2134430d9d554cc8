export { defaultCertificateNames, isDnsName, safeParseCertificateName } from './certificate-names.ts';
export { EXPIRY_WARNING_DAYS } from './certificate-validity.ts';
export { type CertificatePair, generateCertificate } from './generate-certificate.ts';
export {
  type LoadServerCertificateOptions,
  loadServerCertificate,
  renewServerCertificate,
  type ServerCertificate,
} from './load-server-certificate.ts';
export { readServerCertificate } from './read-server-certificate.ts';
export { serverCertificatePaths } from './server-certificate-paths.ts';
