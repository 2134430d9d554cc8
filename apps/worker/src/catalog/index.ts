export { readSkill } from './read-skill.ts';
export { type CatalogScan, scanProjectCatalog } from './scan-project-catalog.ts';
export {
  type CatalogWatcher,
  DEFAULT_CATALOG_DEBOUNCE_MS,
  DEFAULT_CATALOG_POLL_MS,
  watchProjectCatalog,
} from './watch-project-catalog.ts';
