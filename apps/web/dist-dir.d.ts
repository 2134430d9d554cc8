/** The directory of the built web client, with `index.html` at its top. */
export declare const webDistDir: string;
