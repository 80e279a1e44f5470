export declare const packageDir: string
/** Writes page.js and index.html into `outdir`; returns esbuild's metafile. */
export declare const buildPage: (outdir: string, options?: { readonly conditions?: ReadonlyArray<string> }) => Promise<unknown>
