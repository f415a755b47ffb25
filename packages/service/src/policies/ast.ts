/** The syntax tree of a policy expression; every node carries the 0-based offset it starts at. */
export type Expr =
  | { type: 'bool'; value: boolean; pos: number }
  | { type: 'int'; value: bigint; pos: number }
  | { type: 'string'; value: string; pos: number }
  | { type: 'list'; items: Expr[]; pos: number }
  | { type: 'ident'; name: string; pos: number }
  | { type: 'not'; operand: Expr; pos: number }
  /** `a && b && c` is one node with three operands (evaluated left to right, short-circuit). */
  | { type: 'logical'; op: '&&' | '||'; operands: Expr[]; pos: number }
  | { type: 'compare'; op: CompareOp; left: Expr; right: Expr; pos: number }
  | { type: 'in'; left: Expr; right: Expr; pos: number }
  | { type: 'field'; object: Expr; name: string; pos: number }
  | { type: 'index'; object: Expr; index: Expr; pos: number }
  | { type: 'slice'; object: Expr; start?: Expr; end?: Expr; pos: number }
  | { type: 'call'; object: Expr; method: 'contains' | 'count'; args: Expr[]; pos: number }
  | { type: 'lambda'; object: Expr; method: LambdaMethod; variable: string; body: Expr; pos: number }

export type CompareOp = '==' | '!=' | '<' | '>' | '<=' | '>='
export type LambdaMethod = 'all' | 'any' | 'filter'
