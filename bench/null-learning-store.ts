// A learning store that holds nothing: every decision stays in the learner's memory, so the
// learner is measured (bench:adaptive) or counted (test/adaptive/learner-lookups.test.ts) alone.
import type { LearningStore } from "../src/store/types.js";

export const nullLearningStore: LearningStore = {
  scan: async (after) => ({ events: [], through: after }),
  arms: async () => [],
  populationArms: async () => [],
  entityArms: async () => [],
  positions: async () => ({ learned: 0, memoryFrom: 0, stored: 0 }),
  openTrialBins: async () => [],
  pendingFor: async () => [],
  due: async () => [],
  commit: async () => undefined,
  publishOpenTrials: async () => undefined,
  publishedOpenTrials: async () => [],
};
