// A tiny chat reducer for benchmarking the Node bridge (written for ahp-fuzz; covers only the
// four actions of the bench workload). Structural sharing like the real reducers: each step
// copies only the path it changes.
const iso = () => new Date(Date.now()).toISOString();

export function chatReducer(state, action) {
  switch (action.type) {
    case 'chat/turnStarted':
      return {
        ...state,
        activeTurn: { id: action.turnId, startedAt: action.startedAt, message: action.message, responseParts: [] },
        status: 8,
        modifiedAt: iso(),
      };
    case 'chat/responsePart': {
      const t = state.activeTurn;
      if (!t || t.id !== action.turnId) return state;
      return { ...state, activeTurn: { ...t, responseParts: [...t.responseParts, action.part] } };
    }
    case 'chat/delta': {
      const t = state.activeTurn;
      if (!t || t.id !== action.turnId) return state;
      const i = t.responseParts.findIndex((p) => p.id === action.partId);
      if (i < 0 || t.responseParts[i].kind !== 'markdown') return state;
      const parts = t.responseParts.slice();
      parts[i] = { ...parts[i], content: parts[i].content + action.content };
      return { ...state, activeTurn: { ...t, responseParts: parts } };
    }
    case 'chat/turnComplete': {
      const t = state.activeTurn;
      if (!t || t.id !== action.turnId) return state;
      const turn = { id: t.id, startedAt: t.startedAt, duration: Math.max(0, action.duration), message: t.message, responseParts: t.responseParts, state: 'complete' };
      const { activeTurn, ...rest } = state;
      return { ...rest, turns: [...state.turns, turn], status: 1, modifiedAt: iso() };
    }
    default:
      return state;
  }
}
