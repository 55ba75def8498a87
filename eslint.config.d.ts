/** Types for what specs import from eslint.config.js (tests/architecture/layers.spec.ts). */
export declare const CORE_LAYERS: string[][];
declare const config: unknown;
export default config;
