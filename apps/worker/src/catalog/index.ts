export { readSkill } from './read-skill.ts';
export { type CatalogScan, scanProjectCatalog } from './scan-project-catalog.ts';
