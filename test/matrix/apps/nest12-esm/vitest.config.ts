import swc from 'unplugin-swc';
import { defineConfig } from 'vitest/config';

// Vitest transforms with esbuild, which emits no decorator metadata: SWC does, so Nest can inject by type.
export default defineConfig({
  test: { globals: true, include: ['test/**/*.test.ts'] },
  plugins: [swc.vite({ module: { type: 'es6' } })],
});
