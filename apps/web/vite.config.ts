import { defineConfig } from 'vite';
import solid from 'vite-plugin-solid';

/**
 * The page is built into `dist/` by `pnpm install` (scripts/build-web.ts) and served by the Molf
 * server from its own port: file names under `assets/` carry their content hash, so they can be
 * cached for good while `index.html` is revalidated.
 */
export default defineConfig({
  root: import.meta.dirname,
  plugins: [solid()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Chunks load when first needed (syntax highlighting, diffs): the first paint waits for none of them.
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});
