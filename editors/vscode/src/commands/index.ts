/** Every `sidecar.*` command of package.json and the factory that makes its handler: add a command here. */
import { compress, undoCompaction } from './compaction';
import { applyCompactionPreview, compressUpTo, discardCompactionPreview, previewCompaction, rateCompaction } from './compactionControl';
import { CommandFactory } from './context';
import { runDoctor, runDoctorOnline } from './doctor';
import { forkSession, rewind } from './history';
import { runMcpPrompt, showMcpServers } from './mcp';
import { addMemory, refreshMemory, showMemory } from './memory';
import { clearPlan, pin, showPins, unpin } from './pins';
import { clearApiKey, openChat, reinstallServer, restartServer, setApiKey, showLog } from './server';
import { deleteSession, newSession, renameSession, resumeSession } from './sessions';
import { showTranscript } from './transcript';
import { restoreDeletedSession } from './trash';
import { postponeCompaction, selectModel, showContext } from './window';

export const COMMANDS: Record<string, CommandFactory> = {
  'sidecar.compress': compress,
  'sidecar.openChat': openChat,
  'sidecar.newSession': newSession,
  'sidecar.resumeSession': resumeSession,
  'sidecar.undoCompaction': undoCompaction,
  'sidecar.compressUpTo': compressUpTo,
  'sidecar.previewCompaction': previewCompaction,
  'sidecar.applyCompactionPreview': applyCompactionPreview,
  'sidecar.discardCompactionPreview': discardCompactionPreview,
  'sidecar.rateCompaction': rateCompaction,
  'sidecar.showTranscript': showTranscript,
  'sidecar.forkSession': forkSession,
  'sidecar.rewind': rewind,
  'sidecar.renameSession': renameSession,
  'sidecar.deleteSession': deleteSession,
  'sidecar.restoreDeletedSession': restoreDeletedSession,
  'sidecar.pin': pin,
  'sidecar.unpin': unpin,
  'sidecar.showPins': showPins,
  'sidecar.clearPlan': clearPlan,
  'sidecar.setApiKey': setApiKey,
  'sidecar.clearApiKey': clearApiKey,
  'sidecar.showLog': showLog,
  'sidecar.restartServer': restartServer,
  'sidecar.reinstallServer': reinstallServer,
  'sidecar.runDoctor': runDoctor,
  'sidecar.runDoctorOnline': runDoctorOnline,
  'sidecar.showMcpServers': showMcpServers,
  'sidecar.runMcpPrompt': runMcpPrompt,
  // memory: the context files (GEMINI.md, AGENTS.md)
  'sidecar.showMemory': showMemory,
  'sidecar.refreshMemory': refreshMemory,
  'sidecar.addMemory': addMemory,
  // the context window: what fills it, the model
  'sidecar.showContext': showContext,
  'sidecar.selectModel': selectModel,
  'sidecar.postponeCompaction': postponeCompaction,
};
