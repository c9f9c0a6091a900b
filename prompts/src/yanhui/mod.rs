//! YANHUI: knowledge-aware generation from historical bug cases (knowledge base, clustering,
//! generation prompts).
