declare module '@echogarden/fvad-wasm' {
  const createModule: () => Promise<unknown>;
  export default createModule;
}
