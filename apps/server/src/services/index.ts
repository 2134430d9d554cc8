export { createServerServices, type ServerServices, type ServerServicesConfig } from './create-server-services.ts';
export type { HealthReport, WorkerHealth } from './health-report.ts';
