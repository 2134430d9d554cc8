export {
  createServerServices,
  type DatabaseSettings,
  type ServerServices,
  type ServerServicesConfig,
} from './create-server-services.ts';
export type { HealthReport, WorkerHealth } from './health-report.ts';
