import { GeneratedId } from 'nestjs-snowflake/typeorm';
import { Column, Entity } from 'typeorm';

@Entity({ name: 'matrix_post' })
export class Post {
  @GeneratedId()
  id!: string;

  @Column()
  title!: string;
}
