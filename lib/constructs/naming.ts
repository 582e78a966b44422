/** One naming scheme for construct ids, output ids and alarm names (lambdas/shared/naming.ts). */
export { providerPascal, secretArnOutputId, webhookUrlOutputId } from '../../lambdas/shared/naming.js';
