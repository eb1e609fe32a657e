// Test helpers: the corpus of real documents kept in the repository (test/fixtures/corpus).
export { CORPUS_DIR as corpusDir, corpusPath, readCorpus } from "../../../../test/fixtures/corpus.js";
