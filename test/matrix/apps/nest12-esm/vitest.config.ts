import { defineConfig } from 'vitest/config';

// Nothing else is needed: Vitest 4 transforms TypeScript with Vite 8's Oxc, which emits decorator metadata when
// tsconfig.json sets emitDecoratorMetadata, so Nest injects by type. `globals` lets one test file serve Jest too.
export default defineConfig({ test: { globals: true, include: ['test/**/*.test.ts'] } });
